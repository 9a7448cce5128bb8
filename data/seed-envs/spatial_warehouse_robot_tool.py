# skill: spatial-reasoning
# setting: tool-use
# hint: Scan to learn where the package is relative to the robot, move along one axis and then the other, go around any shelf that blocks the way, and scan again when unsure.
import json
import random
import re


class WarehouseRobotEnv:
    SIZE = 6
    MAX_STEPS = 8
    DIRS = {"north": (0, 1), "south": (0, -1), "east": (1, 0), "west": (-1, 0)}

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            picks = rng.sample([(x, y) for x in range(self.SIZE) for y in range(self.SIZE)], 5)
            self.pos, self.package, self.shelves = picks[0], picks[1], set(picks[2:])
            if self.pos[0] != self.package[0] and self.pos[1] != self.package[1] and (self._clear(0) or self._clear(1)):
                break
        self.steps, self.done, self.won = 0, False, False
        obs = (
            f"A robot in a {self.SIZE}x{self.SIZE} warehouse (cells (x, y), x = 0..{self.SIZE - 1} west to east, "
            f"y = 0..{self.SIZE - 1} south to north) is at {self.pos}. Pick up the package; shelves block some cells.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- scan {} : where the package is relative to the robot\n"
            "- move {\"direction\": \"north\"|\"south\"|\"east\"|\"west\", \"steps\": integer} : drive straight; stops early at a shelf or wall\n"
            "- pick_up {} : pick up the package at the robot's cell (ends the task)\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def _clear(self, x_first):
        (x0, y0), (x1, y1) = self.pos, self.package
        row = [(x, y0 if x_first else y1) for x in range(min(x0, x1), max(x0, x1) + 1)]
        col = [(x1 if x_first else x0, y) for y in range(min(y0, y1), max(y0, y1) + 1)]
        return not self.shelves & set(row + col)

    @staticmethod
    def _parse(action):
        text, dec = str(action), json.JSONDecoder()
        for match, _ in zip(re.finditer(r"\{", text), range(20)):
            try:
                obj = dec.raw_decode(text, match.start())[0]
            except Exception:
                continue
            if isinstance(obj, dict):
                return obj
        return None

    def _move(self, direction, steps):
        steps = int(steps) if str(steps).isdecimal() and len(str(steps)) < 3 else 0
        if direction not in self.DIRS or not 1 <= steps <= self.SIZE:
            return f"Error: direction must be north, south, east or west and steps 1 to {self.SIZE}."
        dx, dy = self.DIRS[direction]
        for done in range(steps):
            nxt = (self.pos[0] + dx, self.pos[1] + dy)
            if nxt in self.shelves or not (0 <= nxt[0] < self.SIZE and 0 <= nxt[1] < self.SIZE):
                return f"Moved {done} of {steps} steps {direction}, then hit a shelf or wall. Now at {self.pos}."
            self.pos = nxt
        return f"Moved {steps} steps {direction}. Now at {self.pos}."

    def _scan(self):
        dx, dy = self.package[0] - self.pos[0], self.package[1] - self.pos[1]
        return (f"The package is {abs(dx)} {'east' if dx >= 0 else 'west'} and "
                f"{abs(dy)} {'north' if dy >= 0 else 'south'} of the robot.")

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        call = self._parse(action) or {}
        args, name = call.get("arguments", {}), call.get("name")
        if not call or not isinstance(args, dict):
            obs = "Could not read a tool call. Reply with JSON like {\"name\": \"scan\", \"arguments\": {}}."
        elif name == "scan":
            obs = self._scan()
        elif name == "move":
            obs = self._move(str(args.get("direction", "")).lower(), args.get("steps"))
        elif name == "pick_up":
            self.done, self.won = True, self.pos == self.package
            obs = "Package picked up!" if self.won else "There is no package here. Task failed."
            return obs, float(self.won), True, False, {"success": self.won}
        else:
            obs = "Unknown tool. Use scan, move or pick_up."
        self.done = self.steps >= self.MAX_STEPS
        return obs + " Out of turns." * self.done, 0.0, False, self.done, {"success": False}
