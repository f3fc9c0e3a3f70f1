from .attention import Attention
