"""PDF → pages → structure → chunks. Pure Python + PyMuPDF, no Qt."""
