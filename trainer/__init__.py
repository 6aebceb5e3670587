"""Offline side of Tailor: datasets, TAPER training, federated training and evaluation.

Writes artifacts that `model_store` defines; never imports `service`.
"""
