"""The ablation study: what each Inductor optimization is worth (``python -m inductor_ablate bench``)."""
