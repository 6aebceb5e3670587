"""Anytime federated learning: the Accumulator and its baselines on a frozen ViT, on Flower."""
