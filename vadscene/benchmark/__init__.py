"""What a benchmark ships: its video lists, its frame ground truth, and the readers of its
array and table files. Shared by measurement (normal frames) and the audit (labels).
"""
