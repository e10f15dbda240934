"""Statistics on evaluations: paired comparisons with intervals (:mod:`.compare`) and the
quality gates of a CI job (:mod:`.gates`)."""
