import sys

lines = sys.stdin.read().split("\n")
n = int(lines[0])
teams = [line.split() for line in lines[1:1 + n]]
teams.sort(key=lambda team: -int(team[1]))
print("\n".join(name for name, _ in teams))
