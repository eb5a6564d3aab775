"""Icon generation: the Render panel and the jobs that run Stable Diffusion."""
