"""Text rendering of what :mod:`attnlab.show.walk` computes: the two walks, trace views, tables,
the number formatter and the JSON document. Reads numbers; never computes attention."""
