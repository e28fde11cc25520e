"""Models: the models.toml catalogue, downloads, verification and import."""
