"""Federated FedCLIP training on Flower: adapters over a frozen open_clip backbone (issue 5)."""
