"""Is a difference real, or noise? The statistics every verdict rests on. Pure: no Django,
no I/O.

    stats.py           spread and noise of repeated figures
    verdicts.py        is one setting really faster than another, or is it noise?
    power.py           what a comparison that found nothing could have found, in repeats
    multiplicity.py    many cells tested at once: Holm's correction, so A/A stays quiet
"""
