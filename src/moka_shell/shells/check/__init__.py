"""`moka check` and `moka replay`: views rendered headless, watched, judged and reported."""
