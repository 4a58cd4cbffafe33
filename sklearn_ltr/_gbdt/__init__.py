"""The histogram gradient-boosted tree engine. It knows nothing about ranking."""
