print("biz-server")
