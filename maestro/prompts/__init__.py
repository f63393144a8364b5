"""What a spoke is told: delegation prompts, the XML prompt contract, result parsing."""
