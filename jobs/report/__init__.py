"""The lake's report: one self-contained HTML page of interactive charts (``offsetlake report``)."""
