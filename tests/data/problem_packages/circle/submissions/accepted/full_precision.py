import math

r = float(input())
print(math.pi * r * r)
