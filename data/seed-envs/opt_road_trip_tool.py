# skill: optimisation
# setting: tool-use
# hint: Read the map first and find the route with the lowest total toll, not the fewest roads; a detour over cheap roads can beat a direct road. Then drive that route road by road.
import heapq
import json
import random
import re


class RoadTripEnv:
    TOWNS = ["Ashby", "Brook", "Calder", "Dunmore", "Elton", "Fenwick"]
    MAX_STEPS = 8

    def __init__(self):
        self.reset()

    def _cheapest(self, start):
        cost, heap = {start: 0}, [(0, start)]
        while heap:
            c, town = heapq.heappop(heap)
            for nxt, toll in self.roads[town].items():
                if c + toll < cost.get(nxt, 10 ** 9):
                    cost[nxt] = c + toll
                    heapq.heappush(heap, (c + toll, nxt))
        return cost

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            self.roads = {t: {} for t in self.TOWNS}
            pairs = [(a, b) for i, a in enumerate(self.TOWNS) for b in self.TOWNS[i + 1:]]
            for a, b in rng.sample(pairs, 9):
                self.roads[a][b] = self.roads[b][a] = rng.randint(1, 9)
            self.start, self.goal = rng.sample(self.TOWNS, 2)
            cost = self._cheapest(self.start)
            direct = self.roads[self.start].get(self.goal, 99)
            if self.goal in cost and cost[self.goal] < direct:
                break
        self.best, self.here, self.spent = cost[self.goal], self.start, 0
        self.steps, self.done, self.won = 0, False, False
        obs = (
            f"You are in {self.start} and must reach {self.goal}, paying as little road toll as possible.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- get_map {} : every road with its toll\n"
            "- drive {\"to\": town} : drive the road from your current town to a neighbouring town and pay its toll\n"
            f"The task ends when you arrive in {self.goal}; it counts only if your total toll is the lowest possible. "
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

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

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        call = self._parse(action) or {}
        args, name = call.get("arguments", {}), call.get("name")
        if not call or not isinstance(args, dict):
            obs = "Could not read a tool call. Reply with JSON like {\"name\": \"get_map\", \"arguments\": {}}."
        elif name == "get_map":
            obs = "Roads: " + "; ".join(f"{a} - {b}: {t}" for a in self.TOWNS for b, t in self.roads[a].items() if a < b)
        elif name == "drive":
            dest = str(args.get("to", "")).strip().title()
            if dest not in self.roads[self.here]:
                obs = f"There is no road from {self.here} to '{dest}'. Roads from here go to {', '.join(self.roads[self.here])}."
            else:
                self.spent += self.roads[self.here][dest]
                self.here = dest
                obs = f"You are now in {dest}. Total toll paid: {self.spent}."
                if dest == self.goal:
                    self.done, self.won = True, self.spent == self.best
                    obs += " Cheapest possible route!" if self.won else f" The cheapest route costs {self.best}."
                    return obs, float(self.won), True, False, {"success": self.won}
        else:
            obs = "Unknown tool. Use get_map or drive."
        self.done = self.steps >= self.MAX_STEPS
        return obs + " Out of turns." * self.done, 0.0, False, self.done, {"success": False}
