"""The report's pages (`report`), its downloads (`downloads`) and the Reports index (`index`)."""
