"""Publishing: figures (``plots``, ``rate_plots``, drawn alike by ``drawing``), the numbers a notebook records,
HTML reports and the campaign's index page."""
