# skill: spatial-reasoning
# setting: games
# hint: Trace the route on the map one move at a time, writing down your row and column after each move; up lowers the row number, right raises the column number, and a wall cell can never be entered.
import random
import re
from collections import deque


class GridPathEnv:
    SIZE = 5
    MOVES = {"u": (-1, 0), "d": (1, 0), "l": (0, -1), "r": (0, 1)}
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def _dist(self, start, goal):
        seen, todo = {start: 0}, deque([start])
        while todo:
            cell = todo.popleft()
            for dr, dc in self.MOVES.values():
                nxt = (cell[0] + dr, cell[1] + dc)
                if self._free(nxt) and nxt not in seen:
                    seen[nxt] = seen[cell] + 1
                    todo.append(nxt)
        return seen.get(goal)

    def _free(self, cell):
        return 0 <= cell[0] < self.SIZE and 0 <= cell[1] < self.SIZE and cell not in self.walls

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        cells = [(r, c) for r in range(self.SIZE) for c in range(self.SIZE)]
        while True:
            picks = rng.sample(cells, 10)
            self.start, self.goal, self.walls = picks[0], picks[1], set(picks[2:])
            d = self._dist(self.start, self.goal)
            if d is not None and d >= 4:
                break
        rows = []
        for r in range(self.SIZE):
            marks = {self.start: "S", self.goal: "G"}
            rows.append(" ".join(marks.get((r, c), "#" if (r, c) in self.walls else ".") for c in range(self.SIZE)))
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "Walk from S to G on this map (# is a wall, . is open floor; row 1 is the top row, column 1 the left one):\n"
            + "\n".join(rows)
            + "\nGive the whole route as a string of moves U, D, L, R (up, down, left, right) in \\boxed{...}, "
            f"for example \\boxed{{RRD}}. You may not leave the map or enter a wall. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def _walk(self, moves):
        pos = self.start
        for i, m in enumerate(moves, 1):
            nxt = (pos[0] + self.MOVES[m][0], pos[1] + self.MOVES[m][1])
            if not self._free(nxt):
                return f"Move {i} ({m.upper()}) is blocked at row {pos[0] + 1}, column {pos[1] + 1}."
            pos = nxt
            if pos == self.goal:
                return None
        return f"The route ends at row {pos[0] + 1}, column {pos[1] + 1}, not at G."

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        text = re.sub(r"up|down|left|right", lambda m: m.group(0)[0], boxed[-1].lower()) if boxed else ""
        text = re.sub(r"[\s,;>\-]+", "", text)
        if re.fullmatch(r"[udlr]{1,40}", text):
            msg = self._walk(text)
            if msg is None:
                self.done, self.won = True, True
                return "You reached G!", 1.0, True, False, {"success": True}
        else:
            msg = "Write the route with the letters U, D, L and R only, inside \\boxed{...}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return msg + " Out of attempts.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
