"""Tailor's shared kernel: model code, the artifact format and weight synthesis.

This package never imports ``trainer`` or ``service``: both depend on it, so it must stay the
bottom of the import graph (checked by a test).
"""
