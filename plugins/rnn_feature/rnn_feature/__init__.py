"""The RNN Encoder-Decoder of Cho et al. (2014) as a pysmt plugin: phrase scoring and the WP penalty."""
