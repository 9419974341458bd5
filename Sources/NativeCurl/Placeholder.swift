// placeholder: NativeCurl wraps libcurl (owner: the HTTPTransport work)
