-- Keyset pages of a sorted set. A page starts strictly after the position (score, last member)
-- where the one before ended, in the listing's order: ascending by (score, member), or
-- descending. Removing or re-scoring members already listed shifts nothing that comes later, and
-- the position holds even when its own member is gone.

-- @include order

-- Appends up to `limit` {member, score} pairs of a WITHSCORES reply to `into`.
local function appendScored(into, reply, limit)
  for i = 1, #reply, 2 do
    if #into == limit then break end
    into[#into + 1] = { reply[i], reply[i + 1] }
  end
  return into
end

local function zrange(key, reverse, from, to, ...)
  if reverse then return redis.call('ZRANGE', key, from, to, 'REV', ...) end
  return redis.call('ZRANGE', key, from, to, ...)
end

-- Up to `limit` {member, score} of `key` after (score, last); score nil: the first page. `keyOf`
-- turns a member into what a cursor holds (nil: the member itself) and must keep their order.
-- Work: one ZRANGE of `limit` when `last` is still at `score`, else also the members tied there.
local function zsetPage(key, reverse, limit, score, last, keyOf)
  local page = {}
  if not score then return appendScored(page, zrange(key, reverse, 0, limit - 1, 'WITHSCORES'), limit) end
  if not keyOf then
    local at = redis.call('ZSCORE', key, last)
    if at and tonumber(at) == tonumber(score) then
      local rank = redis.call(reverse and 'ZREVRANK' or 'ZRANK', key, last)
      return appendScored(page, zrange(key, reverse, rank + 1, rank + limit, 'WITHSCORES'), limit)
    end
  end
  -- `last` is gone or moved: its position is between the members tied at `score` (ZRANGE lists
  -- them by member), then come the members past `score`.
  local ties = redis.call('ZRANGE', key, score, score, 'BYSCORE')
  local from, to, step = 1, #ties, 1
  if reverse then from, to, step = #ties, 1, -1 end
  for i = from, to, step do
    local k = keyOf and keyOf(ties[i]) or ties[i]
    if (reverse and bytesBefore(k, last)) or (not reverse and bytesBefore(last, k)) then
      page[#page + 1] = { ties[i], score }
      if #page == limit then return page end
    end
  end
  local beyond = zrange(key, reverse, '(' .. score, reverse and '-inf' or '+inf', 'BYSCORE', 'LIMIT', 0, limit - #page, 'WITHSCORES')
  return appendScored(page, beyond, limit)
end
