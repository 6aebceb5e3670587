"""FedPerfix and partial-personalization baselines on a ViT foundation, trained on Flower."""
