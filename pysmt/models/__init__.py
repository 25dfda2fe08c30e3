"""Readers for the models a system is made of, in the formats Moses writes."""
