"""Putting Maestro into the host CLIs: rendering the canonical command and skill sources
for each host, splicing the stub block into instruction files, the install manifest,
uninstall, the plugin and extension forms, `maestro doctor` and the token footprint."""
