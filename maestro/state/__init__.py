"""The plan file `.ai/MAESTRO.md`: model, parse/render, and the locked read-modify-write store."""
