import Simulator
print("sim")
