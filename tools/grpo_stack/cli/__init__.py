"""Thin command-line front ends: parse arguments, call the library, format, exit."""
