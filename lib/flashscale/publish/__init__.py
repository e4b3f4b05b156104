"""Publishing: figures, the numbers a notebook records, HTML reports and the campaign's index page."""
