"""The serving simulator without a screen: its inputs, its results, their curves and its state."""
