"""Annotation sessions: the events a person's keys send, the annotator's queue, Review and
agreement, consensus and adjudication, and the HTTP routes that stream videos to the browser.
"""
