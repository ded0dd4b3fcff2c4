exports = function() { return context.request.remoteIPAddress; };
