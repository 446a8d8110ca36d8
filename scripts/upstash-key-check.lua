-- The REST bridge puts this in front of every script flagged `allow-key-locking`, collapsed onto
-- the line after the shebang (so the script's own lines keep their numbers in error messages).
-- It shadows `redis` with a table whose call/pcall first check the command's key arguments
-- against KEYS, as Upstash does for such scripts, then make the real call.
-- Written for that collapsing: comments only on lines of their own, every statement ended by `;`.
--
-- __GQ_KEY_SPECS__ becomes the key specs of every command of this redis-server, read once by the
-- bridge with COMMAND, as `;<name> <spec> <spec>...;`. A spec is Redis' begin_search and
-- find_keys: i<index> or k<startfrom>=<KEYWORD>, then /, then r<lastkey>.<keystep>.<limit> or
-- n<keynumidx>.<firstkey>.<keystep>; or `s`: SORT's STORE key and BY/GET patterns. A name whose
-- spec is `*` is a container (its subcommands are `<name>|<subcommand>`); `!` is a command whose
-- keys cannot be declared (FLUSHDB, KEYS, SCAN...), refused. Commands without keys are absent.
-- Arguments are counted as Redis counts them: 0 is the command's name, argv[i + 1] in Lua.
local __gq_call, __gq_pcall, __gq_find, __gq_sub, __gq_match, __gq_upper = redis.call, redis.pcall, string.find, string.sub, string.match, string.upper;
local __gq_specs = '__GQ_KEY_SPECS__';
-- KEYS as the call declared them (read now: the script could change the KEYS table later).
local __gq_declared, __gq_parsed = {}, {};
for i = 1, #KEYS do __gq_declared[KEYS[i]] = true; end;
-- A command's parsed specs, or false for a command without keys (or unknown: the call says so).
local function __gq_lookup(name)
  local specs = __gq_parsed[name];
  if specs ~= nil then return specs; end;
  specs = false;
  local at = not __gq_find(name, '[; ]') and __gq_find(__gq_specs, ';' .. name .. ' ', 1, true);
  if at then
    specs = {};
    local tokens = __gq_sub(__gq_specs, at + #name + 2, __gq_find(__gq_specs, ';', at + 1, true) - 1);
    for token in string.gmatch(tokens, '%S+') do
      local spec = { marker = token };
      local from, kind, a, b, c = __gq_match(token, '^(.-)/(%a)(-?%d+)%.(%d+)%.(%d+)$');
      if from then
        spec = { index = tonumber(__gq_match(from, '^i(%d+)$')), kind = kind, a = tonumber(a), b = tonumber(b), c = tonumber(c) };
        if not spec.index then
          local startfrom, keyword = __gq_match(from, '^k(-?%d+)=(.+)$');
          spec.startfrom, spec.keyword = tonumber(startfrom), keyword;
        end;
      end;
      specs[#specs + 1] = spec;
    end;
  end;
  __gq_parsed[name] = specs;
  return specs;
end;
-- The error a call gets instead of running, or nil when it may run. Arguments the real call
-- refuses anyway (nil, tables) are left for it to report.
local function __gq_refusal(...)
  local argc, argv = select('#', ...), {...};
  if type(argv[1]) ~= 'string' then return nil; end;
  local name = string.lower(argv[1]);
  local specs = __gq_lookup(name);
  if specs and specs[1].marker == '*' then
    if type(argv[2]) ~= 'string' then return nil; end;
    name = name .. '|' .. string.lower(argv[2]);
    specs = __gq_lookup(name);
  end;
  if not specs or specs[1].marker == '*' then return nil; end;
  if specs[1].marker == '!' then
    return { err = "ERR Commands whose keys cannot be declared in KEYS are not allowed in Lua scripts when 'allow-key-locking' flag is set: " .. __gq_upper(name) };
  end;
  local undeclared;
  for _, spec in ipairs(specs) do
    if spec.marker == 's' then
      local i = 2;
      while i + 1 < argc and not undeclared do
        local word = type(argv[i + 1]) == 'string' and __gq_upper(argv[i + 1]);
        local value = argv[i + 2];
        if type(value) == 'number' then value = tostring(value); end;
        if word == 'LIMIT' then
          i = i + 2;
        elseif (word == 'BY' or word == 'GET') and type(value) == 'string' then
          if __gq_find(value, '*', 1, true) then undeclared = value; end;
          i = i + 1;
        elseif word == 'STORE' and type(value) == 'string' and not __gq_declared[value] then
          undeclared = value;
        end;
        i = i + 1;
      end;
    elseif spec.kind then
      local first, last, step = spec.index, nil, spec.b;
      if not first then
        local i, stop, by = spec.startfrom, argc - 1, 1;
        if i < 0 then i, stop, by = argc + i, 1, -1; end;
        while i ~= stop and i >= 1 and i < argc do
          if type(argv[i + 1]) == 'string' and __gq_upper(argv[i + 1]) == spec.keyword then first = i + 1; break; end;
          i = i + by;
        end;
      end;
      if first and spec.kind == 'r' then
        if spec.a >= 0 then
          last = first + spec.a;
        elseif spec.c == 0 then
          last = argc + spec.a;
        else
          last = first + math.floor((argc - first) / spec.c) + spec.a;
        end;
      elseif first then
        local numkeys = tonumber(argv[first + spec.a + 1] or '');
        if numkeys and numkeys >= 0 and numkeys == math.floor(numkeys) then
          first = first + spec.b;
          last = first + numkeys - 1;
        end;
        step = spec.c;
      end;
      if last and step > 0 and first < argc and last < argc then
        for i = first, last, step do
          local key = argv[i + 1];
          if type(key) == 'number' then key = tostring(key); end;
          if type(key) ~= 'string' then return nil; end;
          if not __gq_declared[key] then undeclared = key; break; end;
        end;
      end;
    end;
    if undeclared then
      local shown = string.gsub(__gq_sub(undeclared, 1, 200), '%c', '?');
      return { err = "ERR Dynamic keys are not allowed in Lua scripts when 'allow-key-locking' flag is set: " .. __gq_upper(name) .. " touches '" .. shown .. "', which is not in KEYS" };
    end;
  end;
  return nil;
end;
local redis = setmetatable({
  call = function(...)
    local refusal = __gq_refusal(...);
    if refusal then error(refusal); end;
    return __gq_call(...);
  end,
  pcall = function(...)
    local refusal = __gq_refusal(...);
    if refusal then return refusal; end;
    return __gq_pcall(...);
  end,
}, { __index = redis });
