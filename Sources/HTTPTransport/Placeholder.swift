// placeholder: the async HTTP client protocol + libcurl implementation
