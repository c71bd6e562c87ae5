import Gateway
print("hi")
