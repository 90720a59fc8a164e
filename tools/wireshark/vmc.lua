-- VMC (Virtual Motion Capture protocol: OSC over UDP, 39539/39540) for
-- Wireshark and tshark.
--
-- Decodes OSC bundles (nesting bounded at 8 levels, as our decoder does) and
-- messages with every argument type, then types the VMC messages: bones,
-- root, blendshapes, Apply, OK, T. Never raises a Lua error: every read is
-- checked against the buffer, and what is not OSC gets expert info.
--
-- Install: copy into ~/.local/lib/wireshark/plugins/ (see README.md here).

local vmc = Proto("vmc", "Virtual Motion Capture protocol (OSC)")

local MAX_DEPTH = 8

local f = {
  bundle = ProtoField.string("vmc.bundle", "Bundle"),
  timetag = ProtoField.uint64("vmc.bundle.timetag", "Time tag", base.HEX),
  message = ProtoField.string("vmc.message", "Message"),
  address = ProtoField.string("vmc.address", "Address"),
  typetag = ProtoField.string("vmc.typetag", "Type tag"),
  arg_int = ProtoField.int32("vmc.arg.int", "Int"),
  arg_float = ProtoField.double("vmc.arg.float", "Float"),
  arg_string = ProtoField.string("vmc.arg.string", "String"),
  arg_blob = ProtoField.bytes("vmc.arg.blob", "Blob"),
  arg_int64 = ProtoField.int64("vmc.arg.int64", "Int64"),
  arg_double = ProtoField.double("vmc.arg.double", "Double"),
  bone_name = ProtoField.string("vmc.bone.name", "Bone"),
  px = ProtoField.double("vmc.bone.px", "Position x"),
  py = ProtoField.double("vmc.bone.py", "Position y"),
  pz = ProtoField.double("vmc.bone.pz", "Position z"),
  qx = ProtoField.double("vmc.bone.qx", "Rotation x"),
  qy = ProtoField.double("vmc.bone.qy", "Rotation y"),
  qz = ProtoField.double("vmc.bone.qz", "Rotation z"),
  qw = ProtoField.double("vmc.bone.qw", "Rotation w"),
  root_name = ProtoField.string("vmc.root.name", "Root"),
  blend_name = ProtoField.string("vmc.blend.name", "Blendshape"),
  blend_value = ProtoField.double("vmc.blend.value", "Blendshape value"),
  time = ProtoField.double("vmc.time", "Sender time (s)"),
  ok_loaded = ProtoField.int32("vmc.ok.loaded", "Avatar loaded"),
  messages = ProtoField.uint32("vmc.messages", "Messages"),
}
vmc.fields = {}
for _, v in pairs(f) do table.insert(vmc.fields, v) end

local e_malformed = ProtoExpert.new("vmc.malformed", "Not a well-formed OSC packet",
  expert.group.MALFORMED, expert.severity.ERROR)
vmc.experts = { e_malformed }

local prefs = vmc.prefs
prefs.port1 = Pref.uint("UDP port", 39539, "A UDP port of VMC traffic")
prefs.port2 = Pref.uint("UDP port (second)", 39540, "Another UDP port of VMC traffic")

local Fail = {}
local function fail(reason)
  error(setmetatable({ reason = reason }, Fail), 0)
end

-- An OSC string at `at` within [.., to): its text and the offset after its padding.
local function ostring(buf, at, to)
  local i = at
  while i < to and buf(i, 1):uint() ~= 0 do i = i + 1 end
  if i >= to then fail(string.format("unterminated string at byte %d", at)) end
  local text = i > at and buf(at, i - at):raw() or ""
  local after = at + (math.floor((i - at) / 4) + 1) * 4
  if after > to then fail(string.format("string padding runs past the end at byte %d", at)) end
  return text, after
end

local SHORT = {
  ["/VMC/Ext/Bone/Pos"] = "Bone/Pos", ["/VMC/Ext/Root/Pos"] = "Root/Pos",
  ["/VMC/Ext/Blend/Val"] = "Blend/Val", ["/VMC/Ext/Blend/Apply"] = "Apply",
  ["/VMC/Ext/OK"] = "OK", ["/VMC/Ext/T"] = "T",
}

-- Parses (and, with a tree, shows) the message in [at, to).
local function message(buf, at, to, tree, ctx)
  local addr, p = ostring(buf, at, to)
  if addr:sub(1, 1) ~= "/" then fail(string.format("address does not start with '/' at byte %d", at)) end
  local args, types = {}, ""
  if p < to then
    local tags
    tags, p = ostring(buf, p, to)
    if tags:sub(1, 1) ~= "," then fail(string.format("type tag does not start with ',' at byte %d", p)) end
    types = tags:sub(2)
    for t in types:gmatch(".") do
      local need = ({ i = 4, f = 4, h = 8, d = 8, t = 8, c = 4, r = 4, m = 4 })[t]
      if need then
        if p + need > to then fail(string.format("argument '%s' runs past the end at byte %d", t, p)) end
        local r = buf(p, need)
        local v = t == "f" and r:float() or t == "d" and r:float() or t == "i" and r:int()
          or (t == "h" or t == "t") and r:int64() or r:uint()
        table.insert(args, { t = t, v = v, r = r })
        p = p + need
      elseif t == "s" or t == "S" then
        local s0 = p
        local s
        s, p = ostring(buf, p, to)
        table.insert(args, { t = "s", v = s, r = buf(s0, p - s0) })
      elseif t == "b" then
        if p + 4 > to then fail(string.format("blob size runs past the end at byte %d", p)) end
        local n = buf(p, 4):uint()
        local padded = math.floor((n + 3) / 4) * 4
        if n > to - p - 4 or padded > to - p - 4 then fail(string.format("blob runs past the end at byte %d", p)) end
        table.insert(args, { t = "b", v = n, r = buf(p, 4 + n) })
        p = p + 4 + padded
      elseif t == "T" or t == "F" or t == "N" or t == "I" then
        table.insert(args, { t = t })
      elseif t == "[" or t == "]" then
        -- Arrays: allowed one level deep, values read as above.
      else
        fail(string.format("unknown type tag '%s' at byte %d", t, p))
      end
    end
  end
  if p ~= to then fail(string.format("%d bytes after the end of a message at byte %d", to - p, p)) end
  ctx.count = ctx.count + 1
  local short = SHORT[addr] or "other"
  ctx.kinds[short] = (ctx.kinds[short] or 0) + 1
  table.insert(ctx.order, short)
  if not tree then return end
  local node = tree:add(f.message, buf(at, to - at), addr, string.format("%s ,%s", addr, types))
  node:add(f.address, buf(at, math.min(#addr, to - at)), addr)
  local function num(i) return args[i] and (args[i].t == "f" or args[i].t == "i" or args[i].t == "d") end
  if (addr == "/VMC/Ext/Bone/Pos" or addr == "/VMC/Ext/Root/Pos") and #args >= 8
    and args[1].t == "s" and num(2) and num(3) and num(4) and num(5) and num(6) and num(7) and num(8) then
    node:add(addr == "/VMC/Ext/Bone/Pos" and f.bone_name or f.root_name, args[1].r, args[1].v)
    local fields = { f.px, f.py, f.pz, f.qx, f.qy, f.qz, f.qw }
    for i = 1, 7 do node:add(fields[i], args[i + 1].r, args[i + 1].v) end
    node:append_text(": " .. args[1].v)
  elseif addr == "/VMC/Ext/Blend/Val" and #args >= 2 and args[1].t == "s" and num(2) then
    node:add(f.blend_name, args[1].r, args[1].v)
    node:add(f.blend_value, args[2].r, args[2].v)
    node:append_text(": " .. args[1].v)
  elseif addr == "/VMC/Ext/T" and #args >= 1 and num(1) then
    node:add(f.time, args[1].r, args[1].v)
  elseif addr == "/VMC/Ext/OK" and #args >= 1 and args[1].t == "i" then
    node:add(f.ok_loaded, args[1].r, args[1].v)
  end
  for _, a in ipairs(args) do
    if a.t == "i" or a.t == "c" then node:add(f.arg_int, a.r, a.v)
    elseif a.t == "f" then node:add(f.arg_float, a.r, a.v)
    elseif a.t == "d" then node:add(f.arg_double, a.r, a.v)
    elseif a.t == "s" then node:add(f.arg_string, a.r, a.v)
    elseif a.t == "b" then node:add(f.arg_blob, a.r)
    elseif a.t == "h" or a.t == "t" then node:add(f.arg_int64, a.r, a.v)
    end
  end
end

local function packet(buf, at, to, tree, ctx, depth)
  if to - at >= 8 and buf(at, 8):raw() == "#bundle\0" then
    if depth >= MAX_DEPTH then
      fail(string.format("nesting deeper than %d levels at byte %d", MAX_DEPTH, at))
    end
    if to - at < 16 then fail(string.format("bundle header runs past the end at byte %d", at)) end
    local node = tree and tree:add(f.bundle, buf(at, to - at), "#bundle",
      string.format("Bundle (offset %d, %d bytes)", at, to - at))
    if node then node:add(f.timetag, buf(at + 8, 8)) end
    local p = at + 16
    while p < to do
      if to - p < 4 then fail(string.format("bundle element size out of range at byte %d", p)) end
      local n = buf(p, 4):int()
      if n < 0 or n % 4 ~= 0 or n > to - p - 4 then
        fail(string.format("bundle element size out of range at byte %d", p))
      end
      packet(buf, p + 4, p + 4 + n, node, ctx, depth + 1)
      p = p + 4 + n
    end
    ctx.bundle = true
  else
    message(buf, at, to, tree, ctx)
  end
end

function vmc.dissector(buf, pinfo, tree)
  local len = buf:len()
  pinfo.cols.protocol = "VMC"
  local root = tree:add(vmc, buf(), "Virtual Motion Capture protocol (OSC)")
  -- First check the whole datagram, so a bad one shows no half-tree.
  local ok, err = pcall(packet, buf, 0, len, nil, { count = 0, kinds = {}, order = {} }, 0)
  if not ok then
    local text = getmetatable(err) == Fail and ("not OSC: " .. err.reason)
      or ("dissector error: " .. tostring(err))
    root:add_proto_expert_info(e_malformed, text)
    pinfo.cols.info = "malformed: " .. text
    return len
  end
  local ctx = { count = 0, kinds = {}, order = {} }
  local shown, e2 = pcall(packet, buf, 0, len, root, ctx, 0)
  if not shown then
    root:add_proto_expert_info(e_malformed, "dissector error: " .. tostring(e2))
  end
  root:add(f.messages, ctx.count)
  -- Info: "bundle 57 msgs: 55 Bone/Pos, Root/Pos, OK, T" (kinds in first-seen order).
  local seen, parts = {}, {}
  for _, k in ipairs(ctx.order) do
    if not seen[k] then
      seen[k] = true
      local n = ctx.kinds[k]
      table.insert(parts, n > 1 and string.format("%d %s", n, k) or k)
    end
  end
  pinfo.cols.info = string.format("%s %d msg%s: %s", ctx.bundle and "bundle" or "message",
    ctx.count, ctx.count == 1 and "" or "s", table.concat(parts, ", "))
  return len
end

-- Registered at load (so "Decode As" and tshark -d know it), and again
-- when the port preferences change.
local registered = { 39539, 39540 }
for _, p in ipairs(registered) do DissectorTable.get("udp.port"):add(p, vmc) end
function vmc.init()
  local udp = DissectorTable.get("udp.port")
  for _, p in ipairs(registered) do udp:remove(p, vmc) end
  registered = { prefs.port1, prefs.port2 }
  for _, p in ipairs(registered) do udp:add(p, vmc) end
end
