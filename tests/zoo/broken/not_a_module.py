"""The factory returns a plain function, not an nn.Module."""


def make_head(embed_dim, head_size, context_length):
    return lambda x: x
