"""Writing an audit's result: JSON, CSV, figures, Markdown, HTML and LaTeX."""
