# One image for every Rebound process; docker-compose.yml picks the role by command.
FROM node:20-bookworm-slim
WORKDIR /opt/rebound
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm ci --omit=dev --no-audit --no-fund
COPY proto ./proto
COPY bin ./bin
COPY examples ./examples
COPY scripts ./scripts
ENV REBOUND_CLUSTER=/rebound
ENTRYPOINT ["node", "bin/rebound.js"]
