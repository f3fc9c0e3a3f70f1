"""Raises while being imported."""
import torch

raise RuntimeError("I have not finished this file yet")
