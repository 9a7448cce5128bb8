# skill: state-modification
# setting: tool-use
# hint: Check which rooms are free at that hour, book one that fits the group, then answer with its name.
import random

ROOMS = {"Oak": 4, "Pine": 6, "Cedar": 8, "Birch": 12, "Maple": 20}


class RoomBookingEnv:
    """Book a meeting room that is free and large enough; the booking must exist when answering."""

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.hour = rng.randint(9, 16)
        self.size = rng.randint(3, 15)
        self.busy = {r: set(rng.sample(range(9, 17), rng.randint(2, 5))) for r in ROOMS}
        fits = [r for r in ROOMS if ROOMS[r] >= self.size and self.hour not in self.busy[r]]
        if not fits:  # keep the task possible
            r = max(ROOMS, key=ROOMS.get)
            self.busy[r].discard(self.hour)
        self.booked = None
        return f"Book a room for {self.size} people at {self.hour}:00, then answer with the room you booked.", {}

    def get_tools(self):
        return [
            {"name": "free_rooms", "description": "Rooms free at an hour, with their seats.",
             "parameters": {"type": "object", "properties": {"hour": {"type": "integer"}}, "required": ["hour"]}},
            {"name": "book", "description": "Book a room at an hour.",
             "parameters": {"type": "object", "properties": {"room": {"type": "string"}, "hour": {"type": "integer"}},
                            "required": ["room", "hour"]}},
        ]

    def execute_tool(self, name, arguments):
        try:
            hour = int(arguments.get("hour"))
        except (TypeError, ValueError):
            return "hour must be a whole number."
        if name == "free_rooms":
            free = [f"{r} ({n} seats)" for r, n in ROOMS.items() if hour not in self.busy[r]]
            return ", ".join(free) if free else "No room is free then."
        room = str(arguments.get("room", "")).strip().title()
        if room not in ROOMS:
            return f"No room {room!r}."
        if hour in self.busy[room]:
            return f"{room} is taken at {hour}:00."
        self.busy[room].add(hour)
        self.booked = (room, hour)
        return f"Booked {room} at {hour}:00."

    def step(self, answer):
        room = str(answer).strip().title()
        ok = self.booked is not None and self.booked == (room, self.hour) and ROOMS[room] >= self.size
        return ("Done." if ok else "That booking does not fit the request."), float(ok), True, False, {"success": ok}
