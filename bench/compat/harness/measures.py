"""The headline measures of a comparison, in the order reports show them: shared by
compare.py (the report) and movement.py (the report against the previous run)."""

MEASURES = [
    ('httpyac_sent', 'requests httpyac sent'), ('volley_sent', 'requests Volley sent'),
    ('identical', 'identical (matched in order within the file)'),
    ('identical_bytes', '… of which body byte-identical'),
    ('dynamic_equivalent', 'differ only where the file uses $guid/$timestamp/$random… (not counted identical)'),
    ('differs', 'sent by both but different'), ('missing_in_volley', 'sent by httpyac, not by Volley'),
    ('extra_in_volley', 'sent by Volley, not by httpyac'), ('files', 'files'),
    ('files_httpyac_sent', 'files where httpyac sent ≥1 request'),
    ('files_volley_sent', 'files where Volley sent ≥1 request'),
    ('files_all_identical', 'files where every request is identical (and same count)'),
    ('files_both_sent_nothing', 'files where neither sent anything'),
    ('files_httpyac_timeout', 'files where httpyac was killed at the per-file timeout'),
    ('files_volley_timeout', 'files where Volley was killed at the per-file timeout')
]
