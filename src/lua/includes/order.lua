-- Byte order, the order Redis keeps members and hash fields comparable in. Lua's `<` on strings
-- follows the server's locale (Redis sets LC_COLLATE from its environment), so a cursor compared
-- with it could disagree with the order ZRANGE lists ties in.
local function bytesBefore(a, b)
  if a == b then return false end
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
