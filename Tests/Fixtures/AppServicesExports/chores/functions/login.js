exports = function(payload) { return payload.username; };
