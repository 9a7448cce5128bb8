# skill: spatial-reasoning
# setting: games
# hint: A knight moves two squares in one direction and one square sideways. Work backwards too: list the squares one knight move away from the target, and look for one you can reach quickly from the start.
import random
import re
from collections import deque


class KnightRouteEnv:
    JUMPS = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def _name(self, sq):
        return "abcdefgh"[sq[0]] + str(sq[1] + 1)

    def _distances(self, start):
        dist, todo = {start: 0}, deque([start])
        while todo:
            f, r = todo.popleft()
            for df, dr in self.JUMPS:
                nxt = (f + df, r + dr)
                if 0 <= nxt[0] < self.n and 0 <= nxt[1] < self.n and nxt not in dist:
                    dist[nxt] = dist[(f, r)] + 1
                    todo.append(nxt)
        return dist

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.n = rng.randint(5, 8)
        squares = [(f, r) for f in range(self.n) for r in range(self.n)]
        while True:
            self.start, self.target = rng.sample(squares, 2)
            self.best = self._distances(self.start).get(self.target)
            if self.best is not None and 2 <= self.best <= 4:
                break
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A knight stands on {self._name(self.start)} of a {self.n}x{self.n} board (columns a to "
            f"{'abcdefgh'[self.n - 1]}, rows 1 to {self.n}). Move it to {self._name(self.target)} in as few knight moves "
            "as possible, staying on the board. List the squares it lands on, in order and ending with the target, "
            f"like \\boxed{{c3, d5, ...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def _check(self, text):
        names = re.findall(r"[a-h][1-8]", text.lower())
        if names and names[0] == self._name(self.start):
            names = names[1:]
        if not names or len(names) > 12:
            return "List the squares, like \\boxed{c3, d5}."
        pos = self.start
        for name in names:
            sq = ("abcdefgh".index(name[0]), int(name[1]) - 1)
            if max(sq) >= self.n or (sq[0] - pos[0], sq[1] - pos[1]) not in self.JUMPS:
                return f"{self._name(pos)} to {name} is not a knight move on this board."
            pos = sq
        if pos != self.target:
            return f"The route ends on {self._name(pos)}, not on {self._name(self.target)}."
        if len(names) > self.best:
            return f"That route takes {len(names)} moves; a shorter one exists."
        return None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        msg = self._check(boxed[-1]) if boxed else "Put the list of squares inside \\boxed{...}."
        if msg is None:
            self.done, self.won = True, True
            return "Correct, a shortest route!", 1.0, True, False, {"success": True}
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the fewest moves was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
