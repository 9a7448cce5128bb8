def _answer(reply, gold):
    boxed = _re.findall(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}", reply)
    if boxed:
        return boxed[-1].strip()
    tagged = _re.findall(r"<answer>(.*?)</answer>", reply, _re.S)
    if tagged:
        return tagged[-1].strip()
    if _re.fullmatch(r"-?\d+(\.\d+)?", str(gold).strip()):
        numbers = _re.findall(r"-?\d+(?:\.\d+)?", reply)
        return numbers[-1] if numbers else None
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    return lines[-1].rstrip(".!") if lines else None
