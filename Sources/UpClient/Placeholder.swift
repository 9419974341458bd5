// placeholder: the reference client library (issue 4)
